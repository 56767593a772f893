// Verifies recorded webhook requests with the official Standard Webhooks Go library.
//
// stdin: {"secrets": {name: whsec}, "deliveries": [{"headers": {...}, "body": base64}]}
// stdout: {name: [true or false per delivery]}
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

type delivery struct {
	Headers map[string]string `json:"headers"`
	Body    []byte            `json:"body"`
}

type request struct {
	Secrets    map[string]string `json:"secrets"`
	Deliveries []delivery        `json:"deliveries"`
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "reading the request:", err)
		os.Exit(2)
	}
	answer := map[string][]bool{}
	for name, secret := range req.Secrets {
		webhook, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			fmt.Fprintln(os.Stderr, "secret", name, ":", err)
			os.Exit(2)
		}
		results := make([]bool, 0, len(req.Deliveries))
		for _, d := range req.Deliveries {
			headers := http.Header{}
			for key, value := range d.Headers {
				headers.Set(key, value)
			}
			results = append(results, webhook.Verify(d.Body, headers) == nil)
		}
		answer[name] = results
	}
	if err := json.NewEncoder(os.Stdout).Encode(answer); err != nil {
		fmt.Fprintln(os.Stderr, "writing the answer:", err)
		os.Exit(2)
	}
}
