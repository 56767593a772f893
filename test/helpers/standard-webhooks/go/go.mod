module sluice/test/standard-webhooks-verifier

go 1.21.0

require github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
