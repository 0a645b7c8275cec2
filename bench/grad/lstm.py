"""Twin of lstm.ms: ADBench's LSTM objective (2 layers, 1024 characters
of 14 bits) in float64 PyTorch, one loop turn per character as ADBench's
PyTorch version writes it; the objective under no_grad, then a forward
pass and autograd.grad with respect to the main and extra parameters."""
import torch

import _timing


def read_lstm(path):
    w = open(path).read().split()
    l, c, b = int(w[0]), int(w[1]), int(w[2])
    v = torch.tensor([float(t) for t in w[3:]], dtype=torch.float64)
    at = 0
    main = v[at:at + 8 * l * b].reshape(2 * l, 4 * b); at += 8 * l * b
    extra = v[at:at + 3 * b].reshape(3, b); at += 3 * b
    state = v[at:at + 2 * l * b].reshape(2 * l, b); at += 2 * l * b
    seq = v[at:at + c * b].reshape(c, b)
    return main, extra, state, seq


def lstm_model(weight, bias, hidden, cell, inp):
    b = hidden.shape[0]
    gates = torch.cat((inp, hidden, inp, hidden)) * weight + bias
    forget = torch.sigmoid(gates[0:b])
    ingate = torch.sigmoid(gates[b:2 * b])
    outgate = torch.sigmoid(gates[2 * b:3 * b])
    change = torch.tanh(gates[3 * b:4 * b])
    cell = cell * forget + ingate * change
    return outgate * torch.tanh(cell), cell


def lstm_predict(main, extra, state, x):
    x = x * extra[0]
    out = []
    for i in range(0, len(state), 2):
        hidden, cell = lstm_model(main[i], main[i + 1], state[i], state[i + 1], x)
        out += [hidden, cell]
        x = hidden
    return x * extra[1] + extra[2], out


def lstm_objective(main, extra, state, seq):
    total = 0.0
    count = 0
    s = [state[i] for i in range(state.shape[0])]
    for t in range(seq.shape[0] - 1):
        ypred, s = lstm_predict(main, extra, s, seq[t])
        ynorm = ypred - torch.log(torch.exp(ypred).sum() + 2.0)
        total = total + (seq[t + 1] * ynorm).sum()
        count += seq.shape[1]
    return -total / count


main, extra, state, seq = read_lstm("../../tests/data/adbench/lstm_l2_c1024.txt")


def run_f():
    with torch.no_grad():
        return lstm_objective(main, extra, state, seq).item()


_timing.time_both(run_f, lambda: _timing.grad_sum(lstm_objective, (main, extra), state, seq))
