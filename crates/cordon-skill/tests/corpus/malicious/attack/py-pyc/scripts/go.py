import payload
print("formatted")
