# Closure-heavy code: 10^6 times make an adder, compose two closures, call.
def make_adder(n):
    return lambda x: x + n

def compose(f, g):
    return lambda x: f(g(x))

def run(n):
    total = 0
    for i in range(n):
        add = make_adder(i)
        h = compose(add, lambda x: x * 2)
        total += h(i) % 7
    return total

print(run(1000000))
