package analytics

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLimitsMatchContracts reads the limits the server enforces from libs/contracts and
// checks that the client's constants are the same numbers.
func TestLimitsMatchContracts(t *testing.T) {
	path := filepath.Join("..", "contracts", "src", "limits.ts")
	source, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the server's limits: %v", err)
	}
	for name, mine := range map[string]int{"MAX_CALL_BYTES": MaxCallBytes, "MAX_REQUEST_BYTES": MaxRequestBytes} {
		m := regexp.MustCompile(`export const ` + name + ` = ([0-9_]+);`).FindSubmatch(source)
		if m == nil {
			t.Errorf("%s not found in %s", name, path)
			continue
		}
		theirs, err := strconv.Atoi(strings.ReplaceAll(string(m[1]), "_", ""))
		if err != nil || theirs != mine {
			t.Errorf("%s is %s in %s, %d here", name, m[1], path, mine)
		}
	}
}
