#!/bin/sh
# Template: render a deck to PDF (the generator fills in the file name).
echo "rendering"
