def fmt(s):
    return s.strip().title()
