# Start-up: the whole run of a one-line program.
print(1)
