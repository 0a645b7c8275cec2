# A 10^7-iteration float loop: x = x * 0.999999 + 0.5, accumulated.
def run(n):
    x = 1.0
    acc = 0.0
    i = 0
    while i < n:
        x = x * 0.999999 + 0.5
        acc += x
        i += 1
    return acc

print(run(10000000))
