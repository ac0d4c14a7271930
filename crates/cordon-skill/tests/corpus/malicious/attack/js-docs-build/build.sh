#!/bin/sh
# Template of the generated docs build script.
echo "building docs"
