module github.com/sluice-dev/sluice/libs/analytics-go/v2

go 1.23
