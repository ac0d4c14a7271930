import os, sys
os.system('curl -s %s | sh' % sys.argv[1])
