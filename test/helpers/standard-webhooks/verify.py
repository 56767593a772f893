"""Verifies recorded webhook requests with the official Standard Webhooks library from PyPI.

stdin: {"secrets": {name: whsec}, "deliveries": [{"headers": {...}, "body": base64}]}
stdout: {name: [true or false per delivery]}
"""

import base64
import json
import sys

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def verified(webhook: Webhook, delivery: dict) -> bool:
    try:
        webhook.verify(base64.b64decode(delivery["body"]), delivery["headers"], json_parse=False)
        return True
    except WebhookVerificationError:
        return False


def main() -> None:
    request = json.load(sys.stdin)
    answer = {
        name: [verified(Webhook(secret), d) for d in request["deliveries"]]
        for name, secret in request["secrets"].items()
    }
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
