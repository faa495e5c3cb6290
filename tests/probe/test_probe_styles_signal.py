"""Probe: signal and image processing and state-space filters in the styles of DSP and
vision course work.

Running means by cumulative sums and by ``np.convolve``, window smoothing with mirrored
ends (the window picked by ``eval`` of a string, refused, and by ``getattr``), a biquad
section over Python lists, filters that keep their delay line on ``self`` (refused), a
convolution layer written with ``im2col`` and one written with nested loops into a
preallocated output, a Kalman filter filling per-step arrays, and a Kalman filter class
that keeps its state on ``self`` (refused). Checked against central differences
(probe_harness.py).
"""

import numpy as np
from probe_harness import probe_tests, refusal_test


def running_mean(signal, width):
    acc = np.cumsum(signal)
    acc[width:] = acc[width:] - acc[:-width]
    return acc[width - 1:] / width


def running_mean_weighted(signal, weights):
    return np.sum(weights * running_mean(signal, 3))


def mirrored_smooth(x, span=11, kind="hanning"):
    if span < 3:
        return x
    padded = np.r_[x[span - 1:0:-1], x, x[-2:-span - 1:-1]]
    if kind == "flat":
        taps = np.ones(span, "d")
    else:
        taps = eval("np." + kind + "(span)")  # code from a string: refused (PB407)
    return np.convolve(taps / taps.sum(), padded, mode="valid")


def mirrored_smooth_energy(x):
    return np.sum(mirrored_smooth(x, 5) ** 2)


def mirrored_smooth_getattr(x, span=11, kind="hanning"):
    if span < 3:
        return x
    padded = np.r_[x[span - 1:0:-1], x, x[-2:-span - 1:-1]]
    if kind == "flat":
        taps = np.ones(span, "d")
    else:
        taps = getattr(np, kind)(span)
    return np.convolve(taps / taps.sum(), padded, mode="valid")


def mirrored_getattr_energy(x):
    return np.sum(mirrored_smooth_getattr(x, 5) ** 2)


def mirrored_flat_energy(x):
    return np.sum(mirrored_smooth_getattr(x, 5, "flat") ** 2)


def boxcar(signal, width, mode="valid"):
    taps = np.repeat(1.0, width) / width
    return np.convolve(np.asarray(signal, dtype=float), taps, mode)


def boxcar_energy(signal):
    return np.sum(boxcar(signal, 3) ** 2)


def biquad_list(samples, num, den):
    xs = list(map(float, samples))
    ys = [0.0] * len(xs)
    b0, b1, b2 = num
    _, a1, a2 = den
    x1 = x2 = y1 = y2 = 0.0
    for n in range(len(xs)):
        out = b0 * xs[n] + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        ys[n] = out
        x2, x1 = x1, xs[n]
        y2, y1 = y1, out
    return ys


def biquad_power_by_num(num, samples, den):
    return sum(v * v for v in biquad_list(samples, num, den))


def biquad_power_by_samples(samples, num, den):
    return sum(v * v for v in biquad_list(samples, num, den))


class DelaySection:
    """A direct-form biquad that remembers its last inputs and outputs on ``self``."""

    def __init__(self, b0, b1, b2, a0, a1, a2):
        self.coef = [b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0]
        self.in1 = self.in2 = self.out1 = self.out2 = 0

    def run(self, samples):
        result = np.empty(0)
        k = self.coef
        for x in samples:
            y = k[0] * x + k[1] * self.in1 + k[2] * self.in2 - k[3] * self.out1 - k[4] * self.out2
            result = np.append(result, y)
            self.in2, self.in1 = self.in1, x
            self.out2, self.out1 = self.out1, y
        return result


def delay_section_power(samples, coeffs):
    return np.sum(DelaySection(*coeffs).run(samples) ** 2)


class Section2:
    def __init__(self, fir, iir):
        self.fir, self.iir = fir, iir
        self.z1 = 0
        self.z2 = 0

    def tick(self, v):
        w = v - self.iir[1] * self.z1 - self.iir[2] * self.z2
        y = self.fir[0] * w + self.fir[1] * self.z1 + self.fir[2] * self.z2
        self.z2 = self.z1
        self.z1 = w
        return y


class Cascade:
    def __init__(self, sos):
        self.stages = []
        for row in sos:
            self.stages.append(Section2(row[:3], row[3:]))

    def tick(self, v):
        for stage in self.stages:
            v = stage.tick(v)
        return v


def cascade_power(samples, sos):
    chain = Cascade(sos)
    return sum(chain.tick(v) ** 2 for v in samples)


class StateFilter:
    """Transposed direct form II; the delay line is an array on ``self``."""

    def __init__(self, num, den):
        self.den = np.array(den)
        self.num = np.zeros(self.den.size)
        self.num[self.num.size - len(num):] = num
        self.state = np.zeros(self.num.size - 1)

    def step(self, u):
        y = self.num[0] * u + self.state[0]
        for i in range(1, self.state.size):
            self.state[i - 1] = self.num[i] * u + self.state[i] - self.den[i] * y
        self.state[-1] = self.num[-1] * u - self.den[-1] * y
        return y


def state_filter_power(num, den, inputs):
    filt = StateFilter(num, den)
    total = 0.0
    for u in inputs:
        total += filt.step(u) ** 2
    return total


def patches(images, fh, fw, stride=1, pad=0):
    n, ch, h, w = images.shape
    oh = (h + 2 * pad - fh) // stride + 1
    ow = (w + 2 * pad - fw) // stride + 1
    padded = np.pad(images, [(0, 0), (0, 0), (pad, pad), (pad, pad)], "constant")
    cols = np.zeros((n, ch, fh, fw, oh, ow))
    for dy in range(fh):
        for dx in range(fw):
            cols[:, :, dy, dx, :, :] = padded[:, :, dy:dy + stride * oh:stride,
                                              dx:dx + stride * ow:stride]
    return cols.transpose(0, 4, 5, 1, 2, 3).reshape(n * oh * ow, -1)


def conv_by_patches(images, kernels, bias, stride=1, pad=1):
    nk, _, kh, kw = kernels.shape
    n, _, h, w = images.shape
    oh = 1 + (h + 2 * pad - kh) // stride
    ow = 1 + (w + 2 * pad - kw) // stride
    out = patches(images, kh, kw, stride, pad) @ kernels.reshape(nk, -1).T + bias
    out = out.reshape(n, oh, ow, -1).transpose(0, 3, 1, 2)
    return np.sum(out ** 2)


def conv_by_patches_kernels(kernels, images, bias):
    return conv_by_patches(images, kernels, bias)


def conv_loops(images, kernels, bias, opts):
    pad, stride = opts["pad"], opts["stride"]
    n, ch, h, w = images.shape
    nk, _, kh, kw = kernels.shape
    oh = 1 + (h + 2 * pad - kh) // stride
    ow = 1 + (w + 2 * pad - kw) // stride
    padded = np.pad(images, ((0, 0), (0, 0), (pad, pad), (pad, pad)), "constant")
    out = np.zeros((n, nk, oh, ow))
    for b in range(n):
        for k in range(nk):
            for r in range(oh):
                for c in range(ow):
                    acc = 0
                    for q in range(ch):
                        win = padded[b, q, r * stride:r * stride + kh, c * stride:c * stride + kw]
                        acc += np.sum(win * kernels[k, q])
                    out[b, k, r, c] = acc + bias[k]
    return out, (images, kernels)


def conv_loops_by_kernels(kernels, images, bias):
    out, _ = conv_loops(images, kernels, bias, {"pad": 1, "stride": 1})
    return np.sum(out ** 2)


def conv_loops_by_images(images, kernels, bias):
    out, _ = conv_loops(images, kernels, bias, {"pad": 1, "stride": 2})
    return np.sum(np.tanh(out))


def kalman_arrays(obs, exog, load_x, load_s, drift, trans, obs_var, state_var):
    steps = obs.shape[0] - 1
    n_obs, dim = obs.shape[1], drift.shape[0]
    varying = load_s.shape[-1] == steps + 1
    filt = np.zeros((steps + 1, dim, 1))
    filt_cov = np.zeros((steps + 1, dim, dim))
    pred = np.zeros((steps + 1, dim, dim))
    pred_cov = np.zeros((steps + 1, dim, dim))
    innov = np.zeros((steps + 1, n_obs))
    innov_cov = np.zeros((steps + 1, dim, dim))
    ll = np.zeros(steps + 1)
    # start from the stationary mean and covariance
    filt[0] = np.linalg.inv(np.eye(dim) - trans).dot(drift)
    vec_q = state_var.reshape(state_var.size, 1)
    filt_cov[0] = np.linalg.inv(np.eye(dim ** 2) - np.kron(trans, trans)).dot(vec_q).reshape(
        dim, dim)
    H = load_s[:, :, 0]
    for t in range(1, steps + 1):
        if varying:
            H = load_s[:, :, t]
        pred[t] = drift + trans.dot(filt[t - 1])
        pred_cov[t] = trans.dot(filt_cov[t - 1]).dot(trans.T) + state_var
        innov[t] = obs[t] - (H.dot(pred[t]) + load_x.dot(exog[t]))
        ph = pred_cov[t].dot(H.T)
        innov_cov[t] = H.dot(ph) + obs_var
        inv_s = np.linalg.inv(innov_cov[t])
        ll[t] = (-0.5 * np.log(2 * np.pi * np.linalg.det(innov_cov[t]))
                 - 0.5 * innov[t].T.dot(inv_s).dot(innov[t]))
        gain = ph.dot(inv_s)
        filt[t] = pred[t] + gain.dot(innov[t])
        filt_cov[t] = pred_cov[t] - gain.dot(H).dot(pred_cov[t])
    return filt, filt_cov, ll


def kalman_arrays_nll(trans, obs, exog, load_x, load_s, drift, obs_var, state_var):
    return -kalman_arrays(obs, exog, load_x, load_s, drift, trans, obs_var, state_var)[-1].sum()


class Tracker:
    def __init__(self, trans, noise, meas, mean, cov, meas_var):
        self.trans = np.array(trans)
        self.noise = np.array(noise)
        self.meas = np.array(meas)
        self.mean = np.array(mean)
        self.cov = np.array(cov)
        self.meas_var = np.array(meas_var)

    def predict(self):
        self.mean = self.trans @ self.mean
        self.cov = self.trans @ self.cov @ self.trans.T + self.noise

    def correct(self, z):
        s = self.meas @ self.cov @ self.meas.T + self.meas_var
        gain = self.cov @ self.meas.T @ np.linalg.matrix_power(s, -1)
        self.mean = self.mean + gain @ (z - self.meas @ self.mean)
        self.cov = self.cov - gain @ self.meas @ self.cov


def tracker_run(noise, trans, meas, mean0, cov0, meas_var, zs):
    tr = Tracker(trans, noise, meas, mean0, cov0, meas_var)
    for z in zs:
        tr.predict()
        tr.correct(z)
    return np.sum(tr.mean ** 2) + np.trace(tr.cov)


_g = np.random.default_rng(29)
SIG = np.cos(np.linspace(0, 3, 12)) + 0.1 * _g.standard_normal(12)
PULSE = np.array([0.9, 0.4, -0.2, 0.3, 0.7])
SOS = np.array([[0.2, 0.3, 0.1, 1.0, -0.5, 0.1], [1.0, 0.2, 0.0, 1.0, 0.3, 0.05]])
IMGS = _g.standard_normal((2, 2, 4, 4))
KERNELS = 0.5 * _g.standard_normal((3, 2, 3, 3))
BIAS = 0.1 * _g.standard_normal(3)
OBS = np.cumsum(_g.standard_normal((8, 1)), axis=0) * 0.3
KALMAN = (OBS, np.zeros((8, 1)), np.zeros((1, 1)), np.ones((1, 1, 1)), np.array([[0.1]]),
          np.array([[0.5]]), np.array([[0.3]]))
TRACK = (np.array([[0.01]]), np.array([[0.95]]), np.array([[1.0]]), np.array([1.0]),
         np.eye(1), np.array([[0.1]]), [np.array([0.3]), np.array([0.5])])

PROBES = {
    "running_mean_weighted": (running_mean_weighted, (SIG, np.linspace(1, 2, 10)), True),
    "mirrored_getattr_energy": (mirrored_getattr_energy, (SIG,), True),
    "mirrored_flat_energy": (mirrored_flat_energy, (SIG,), False),
    "boxcar_energy": (boxcar_energy, (SIG,), False),
    "biquad_power_by_num": (biquad_power_by_num, (np.array([0.2, 0.3, 0.1]), PULSE,
                                                  (1.0, -0.5, 0.1)), True),
    "biquad_power_by_samples": (biquad_power_by_samples, (PULSE, (0.2, 0.3, 0.1),
                                                          (1.0, -0.5, 0.1)), False),
    "conv_by_patches_kernels": (conv_by_patches_kernels, (KERNELS, IMGS, BIAS), False),
    "conv_loops_by_kernels": (conv_loops_by_kernels, (KERNELS, IMGS, BIAS), False),
    "conv_loops_by_images": (conv_loops_by_images, (IMGS, KERNELS, BIAS), False),
    "kalman_arrays_nll": (kalman_arrays_nll, (np.array([[0.6]]), *KALMAN), True),
    # the tracker keeps its state on self: versions of it (transform/object_stores.py)
    "tracker_run": (tracker_run, TRACK, True),
    # (jvp: forward mode does not follow a plain class called with *args, MissingRuleError)
    "delay_section_power": (delay_section_power, (PULSE, (0.2, 0.3, 0.1, 1.0, -0.5, 0.1)),
                            False),
}


test_probe, test_float32 = probe_tests(PROBES)


# Refused with reason and place: code built from a string (the getattr form above is the
# fix); filters that keep their state on `self` through an array written in place, or on
# objects held in a list.
REFUSED = {
    "mirrored_smooth_energy": (mirrored_smooth_energy, (SIG,), ("PB407", "eval(")),
    "state_filter_power": (state_filter_power, (np.array([0.2, 0.3]), np.array([1.0, -0.5, 0.1]),
                                                PULSE), ("PB107", "self.state[i - 1]")),
    "cascade_power": (cascade_power, (PULSE, SOS), ("PB107", "reads back")),
}


test_refused = refusal_test(REFUSED)
