import concurrent.futures.process as p
p.os.system("id")
