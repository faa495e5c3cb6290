"""Probe s33: scientific scripts as written: particles, kinetics, optics, signals, climate.

Lennard-Jones and Morse energies by pair loops ``for i in range(n): for j in range(i + 1,
n):`` with minimum-image wrapping ``d -= L * np.round(d / L)`` and cutoffs ``if r2 < rc2:``,
velocity Verlet with a force array filled in place pair by pair, bond angles by ``arccos``
of a clipped cosine; mass-action kinetics through a stoichiometry matrix, SIR/SEIR models
through ``odeint``/``solve_ivp`` with the parameters in ``args``, Michaelis-Menten fits,
pharmacokinetic compartments (closed form and Euler loops appending to lists),
Hodgkin-Huxley gating rates written with ``np.expm1``; ray-sphere intersection with
``np.sqrt(disc)`` under ``np.where``, Snell refraction and Fresnel reflectance, FIR and IIR
filters written as ``lfilter``-style loops and by ``scipy.signal.lfilter``, window functions
and ``np.fft.rfft`` power spectra, Gaussian smoothing by ``np.convolve``; energy-balance
models with an albedo switch ``np.where(T < Tc, a1, a2)``, albedo tables read by
``np.interp``, emissions accumulated by ``np.cumsum`` and a bucket model clipped by ``min``.
Each against central differences (probe_harness.py), float64 and float32, at second order
where cheap.
"""

# ruff: noqa: B007, B008, B905, E741, N806 - written the way public code is written

import numpy as np
from probe_harness import probe_tests
from scipy import signal
from scipy.integrate import odeint, solve_ivp
from sweeps import long_run

# -- particles ------------------------------------------------------------------------------


def lj_periodic(x, L=3.0, rc=2.5, eps=1.0, sigma=1.0):
    pos = x.reshape(-1, 3)
    n = pos.shape[0]
    rc2 = rc * rc
    shift = 4 * eps * ((sigma / rc) ** 12 - (sigma / rc) ** 6)
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = pos[i] - pos[j]
            d -= L * np.round(d / L)
            r2 = np.dot(d, d)
            if r2 < rc2:
                sr6 = (sigma**2 / r2) ** 3
                energy += 4 * eps * (sr6 * sr6 - sr6) - shift
    return energy


def lj_forces(pos, L=3.0, rc2=6.25):
    n = len(pos)
    f = np.zeros_like(pos)
    for i in range(n - 1):
        for j in range(i + 1, n):
            rij = pos[i] - pos[j]
            rij = rij - L * np.round(rij / L)
            r2 = np.sum(rij**2)
            if r2 < rc2:
                ir6 = 1.0 / r2**3
                fmag = 24.0 * ir6 * (2.0 * ir6 - 1.0) / r2
                f[i] += fmag * rij
                f[j] -= fmag * rij
    return f


def verlet_md(x0, dt=0.005, steps=4):
    pos = x0.reshape(-1, 2).copy()
    vel = np.zeros_like(pos)
    forces = lj_forces(pos)
    for step in range(steps):
        vel += 0.5 * dt * forces
        pos += dt * vel
        forces = lj_forces(pos)
        vel += 0.5 * dt * forces
    ke = 0.5 * np.sum(vel**2)
    return ke + np.sum(pos[:, 0])


def morse_vectorized(x, De=1.0, a=1.5, re=1.1, L=4.0):
    pos = x.reshape(-1, 3)
    i, j = np.triu_indices(len(pos), k=1)
    dr = pos[i] - pos[j]
    dr = dr - L * np.rint(dr / L)
    r = np.linalg.norm(dr, axis=1)
    return np.sum(De * (1 - np.exp(-a * (r - re))) ** 2)


def bond_angles(coords, k_theta=0.5, theta0=1.9):
    xyz = coords.reshape(-1, 3)
    E = 0.0
    for a, b, c in [(0, 1, 2), (1, 2, 3)]:
        v1 = xyz[a] - xyz[b]
        v2 = xyz[c] - xyz[b]
        cos_t = np.dot(v1, v2) / (np.linalg.norm(v1) * np.linalg.norm(v2))
        theta = np.arccos(np.clip(cos_t, -1.0, 1.0))
        E += k_theta * (theta - theta0) ** 2
    for a, b in [(0, 1), (1, 2), (2, 3)]:
        E += 10.0 * (np.linalg.norm(xyz[a] - xyz[b]) - 1.0) ** 2
    return E


def thermostat_rescale(v0, T0=1.0, steps=3):
    v = v0.copy()
    for _ in range(steps):
        T = np.mean(v**2)
        v *= np.sqrt(T0 / T)
        v = v - 0.1 * v**3
    return np.sum(v * np.arange(1, len(v) + 1))


# -- kinetics, epidemiology, pharmacology ----------------------------------------------------

# A + B -> C, C -> A + B, C -> D
S = np.array([[-1, -1, 1, 0], [1, 1, -1, 0], [0, 0, -1, 1]])
ORDERS = np.array([[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 0]])


def mass_action(k, dt=0.05, steps=20):
    c = np.array([1.0, 0.8, 0.0, 0.0])
    for _ in range(steps):
        rates = k * np.prod(c**ORDERS, axis=1)
        dcdt = S.T @ rates
        c = c + dt * dcdt
    return c[3]


def sir(y, t, beta, gamma):
    S_, I, R = y
    N = S_ + I + R
    dS = -beta * S_ * I / N
    dI = beta * S_ * I / N - gamma * I
    dR = gamma * I
    return dS, dI, dR


def sir_odeint(params):
    beta, gamma = params
    t = np.linspace(0, 10, 11)
    sol = odeint(sir, [0.99, 0.01, 0.0], t, args=(beta, gamma), rtol=1e-10, atol=1e-12)
    S_, I, R = sol.T
    return R[-1] + 0.1 * np.max(I)


def seir_rhs(t, y, beta, sigma, gamma):
    s, e, i, r = y
    return [-beta * s * i, beta * s * i - sigma * e, sigma * e - gamma * i, gamma * i]


def seir_ivp(theta):
    sol = solve_ivp(
        seir_rhs,
        (0.0, 8.0),
        [0.98, 0.01, 0.01, 0.0],
        args=tuple(theta),
        rtol=1e-10,
        atol=1e-12,
        t_eval=[2.0, 4.0, 8.0],
    )
    return np.sum(sol.y[2]) + sol.y[3, -1]


S_CONC = np.array([0.1, 0.3, 0.6, 1.0, 2.0, 4.0])
V_OBS = np.array([0.09, 0.22, 0.35, 0.45, 0.58, 0.66])


def michaelis_menten_sse(p):
    Vmax, Km = p[0], p[1]
    v_pred = Vmax * S_CONC / (Km + S_CONC)
    resid = V_OBS - v_pred
    return np.sum(resid**2)


def pk_oral_auc(theta, dose=100.0, V=10.0):
    ka, ke = theta
    t = np.linspace(0.0, 12.0, 25)
    C = dose * ka / (V * (ka - ke)) * (np.exp(-ke * t) - np.exp(-ka * t))
    auc = np.sum((C[1:] + C[:-1]) * np.diff(t)) / 2
    cmax = C.max()
    return auc + cmax


def pk_two_compartment(k, dt=0.1, n=40):
    k10, k12, k21 = k[0], k[1], k[2]
    a1, a2 = 10.0, 0.0
    central = []
    for step in range(n):
        da1 = -(k10 + k12) * a1 + k21 * a2
        da2 = k12 * a1 - k21 * a2
        a1 = a1 + dt * da1
        a2 = a2 + dt * da2
        central.append(a1)
    central = np.array(central)
    return np.sum(central) * dt


def hh_gating(V0, dt=0.01, steps=30):
    V = V0
    n, m, h = 0.32, 0.05, 0.6
    gK, gNa, gL = 36.0, 120.0, 0.3
    for _ in range(steps):
        an = -0.01 * (V + 55) / np.expm1(-(V + 55) / 10)
        bn = 0.125 * np.exp(-(V + 65) / 80)
        am = -0.1 * (V + 40) / np.expm1(-(V + 40) / 10)
        bm = 4.0 * np.exp(-(V + 65) / 18)
        ah = 0.07 * np.exp(-(V + 65) / 20)
        bh = 1.0 / (1 + np.exp(-(V + 35) / 10))
        n += dt * (an * (1 - n) - bn * n)
        m += dt * (am * (1 - m) - bm * m)
        h += dt * (ah * (1 - h) - bh * h)
        I_ion = gK * n**4 * (V + 77) + gNa * m**3 * h * (V - 50) + gL * (V + 54.4)
        V = V + dt * (10.0 - I_ion)
    return V


def hill_dose_response(params, conc=np.array([0.01, 0.1, 1.0, 10.0, 100.0])):
    bottom, top, logec50, hill = params
    resp = bottom + (top - bottom) / (1 + 10 ** ((logec50 - np.log10(conc)) * hill))
    return np.sum((resp - np.array([2.0, 10.0, 45.0, 85.0, 98.0])) ** 2)


# -- optics, graphics, signal ----------------------------------------------------------------

ORIGINS = np.array([[0.0, 0.0, 0.0], [0.3, -0.2, 0.0], [2.5, 0.0, 0.0], [-0.1, 0.4, 0.0]])
DIRS = np.array([[0.0, 0.0, 1.0], [0.0, 0.1, 1.0], [0.0, 0.0, 1.0], [0.1, -0.1, 1.0]])


def ray_sphere_hits(center, radius=1.0):
    oc = ORIGINS - center
    d = DIRS / np.linalg.norm(DIRS, axis=1, keepdims=True)
    b = 2.0 * np.sum(oc * d, axis=1)
    c = np.sum(oc * oc, axis=1) - radius**2
    disc = b * b - 4 * c
    t = np.where(disc > 0, (-b - np.sqrt(disc)) / 2.0, np.inf)
    hit = np.isfinite(t)
    return np.sum(t[hit]) + np.sum(np.where(disc > 0, np.sqrt(disc), 0.0))


def refract(i, n, eta):
    cosi = -np.dot(n, i)
    k = 1.0 - eta * eta * (1.0 - cosi * cosi)
    if k < 0:
        return np.zeros(3)
    return eta * i + (eta * cosi - np.sqrt(k)) * n


def snell_spot(theta, n1=1.0, n2=1.5):
    i = np.array([np.sin(theta[0]), 0.0, -np.cos(theta[0])])
    normal = np.array([0.0, np.sin(theta[1]), np.cos(theta[1])])
    t = refract(i, normal, n1 / n2)
    # where the refracted ray meets the plane z = -2
    s = -2.0 / t[2]
    return (s * t[0]) ** 2 + (s * t[1]) ** 2


def fresnel_reflectance(theta_i, n1=1.0, n2=1.52):
    cos_i = np.cos(theta_i)
    sin_t = n1 / n2 * np.sin(theta_i)
    cos_t = np.sqrt(1.0 - sin_t**2)
    rs = (n1 * cos_i - n2 * cos_t) / (n1 * cos_i + n2 * cos_t)
    rp = (n1 * cos_t - n2 * cos_i) / (n1 * cos_t + n2 * cos_i)
    R = 0.5 * (rs**2 + rp**2)
    R0 = ((n1 - n2) / (n1 + n2)) ** 2
    schlick = R0 + (1 - R0) * (1 - cos_i) ** 5
    return np.sum(R) + 0.5 * np.sum(schlick)


def lfilter_loop(b, x=np.sin(np.linspace(0, 6, 16)), a=(1.0, -0.5, 0.2)):
    y = np.zeros(len(x))
    for n in range(len(x)):
        acc = 0.0
        for k in range(len(b)):
            if n - k >= 0:
                acc += b[k] * x[n - k]
        for k in range(1, len(a)):
            if n - k >= 0:
                acc -= a[k] * y[n - k]
        y[n] = acc / a[0]
    return np.sum(y**2)


def butter_like_filter(b, x=np.sin(np.linspace(0, 9, 24)) + 0.3 * np.cos(np.linspace(0, 40, 24))):
    a = np.array([1.0, -0.6, 0.25])
    y = signal.lfilter(b, a, x)
    return np.sum(y[5:] ** 2) / len(y)


def iir_by_feedback(a1, x=np.cos(np.linspace(0, 5, 12))):
    y = np.zeros_like(x)
    y[0] = x[0]
    for n in range(1, len(x)):
        y[n] = x[n] + a1 * y[n - 1]
    return np.mean(y**2)


def windowed_power(x, fs=8.0):
    N = len(x)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N) / (N - 1))
    X = np.fft.rfft(x * w)
    P = np.abs(X) ** 2 / np.sum(w**2)
    freqs = np.fft.rfftfreq(N, d=1 / fs)
    centroid = np.sum(freqs * P) / np.sum(P)
    return centroid + 0.01 * P[1:].sum()


def gaussian_smooth(sigma, x=np.sign(np.sin(np.linspace(0, 6, 20)))):
    half = 4
    t = np.arange(-half, half + 1)
    g = np.exp(-0.5 * (t / sigma) ** 2)
    g /= g.sum()
    y = np.convolve(x, g, mode="same")
    return np.sum(np.diff(y) ** 2)


# -- climate and hydrology -------------------------------------------------------------------


def ebm_albedo(params, dt=0.1, years=40):
    A, B = params
    T = 5.0
    C, S0, Tc = 4.0, 1361.0, -10.0
    temps = []
    for yr in range(years):
        alpha = np.where(T < Tc, 0.6, 0.3)
        dTdt = (S0 / 4 * (1 - alpha) - (A + B * T)) / C
        T = T + dt * dTdt
        temps.append(T)
    temps = np.array(temps)
    return temps[-1] + np.mean(temps)


T_TABLE = np.array([-30.0, -10.0, 0.0, 10.0, 30.0])
ALBEDO_TABLE = np.array([0.62, 0.55, 0.4, 0.32, 0.28])


def ebm_interp(T0, years=20, dt=0.2):
    T = T0.copy()
    lat = np.linspace(-80, 80, len(T0))
    insol = 340.0 * (1.0 - 0.48 * ((3 * np.sin(np.radians(lat)) ** 2 - 1) / 2))
    for _ in range(years):
        albedo = np.interp(T, T_TABLE, ALBEDO_TABLE)
        diff = 0.6 * (np.mean(T) - T)
        T = T + dt * (insol * (1 - albedo) - (203.3 + 2.09 * T) + diff * 10) / 10.0
    return np.mean(T**2) / 100


def carbon_cumsum(emissions, tcre=0.45, af=0.45):
    cumulative = np.cumsum(emissions)
    conc = 280.0 + af * cumulative / 2.12
    forcing = 5.35 * np.log(conc / 280.0)
    T = np.zeros(len(emissions))
    for t in range(1, len(emissions)):
        T[t] = T[t - 1] + (0.8 * forcing[t] - T[t - 1]) / 8.0
    return T[-1] + tcre * cumulative[-1] / 1000


def bucket_model(precip, capacity=100.0, pet=3.0, k=0.05):
    soil = 50.0
    runoff = []
    for P in precip:
        soil = soil + P - pet * soil / capacity
        overflow = max(soil - capacity, 0.0)
        soil = min(soil, capacity)
        q = k * soil + overflow
        soil -= k * soil
        runoff.append(q)
    return np.sum(np.array(runoff) ** 2) / 100


PROBES = {
    "lj_periodic": (
        lj_periodic,
        (np.array([0.1, 0.2, 0.0, 1.2, 0.1, 0.3, 0.3, 1.3, 0.2, 2.6, 2.7, 0.1]),),
        True,
    ),
    "verlet_md": (verlet_md, (np.array([0.0, 0.0, 1.1, 0.1, 0.2, 1.05, 2.5, 2.6]),), False),
    "morse_vectorized": (
        morse_vectorized,
        (np.array([0.0, 0.0, 0.0, 1.0, 0.2, 0.1, 0.1, 1.2, 0.3, 3.5, 0.1, 0.2]),),
        True,
    ),
    "bond_angles": (
        bond_angles,
        (np.array([0.0, 0.0, 0.0, 1.0, 0.1, 0.0, 1.4, 1.0, 0.1, 2.3, 1.2, 0.5]),),
        True,
    ),
    "thermostat_rescale": (thermostat_rescale, (np.array([0.5, -0.3, 0.8, 0.1]),), True),
    "mass_action": (mass_action, (np.array([1.5, 0.3, 0.8]),), True),
    "sir_odeint": (sir_odeint, (np.array([1.2, 0.4]),), False),
    "seir_ivp": (seir_ivp, (np.array([1.5, 0.5, 0.3]),), False),
    "michaelis_menten_sse": (michaelis_menten_sse, (np.array([0.8, 0.9]),), True),
    "pk_oral_auc": (pk_oral_auc, (np.array([1.2, 0.25]),), True),
    "pk_two_compartment": (pk_two_compartment, (np.array([0.3, 0.5, 0.2]),), True),
    "hh_gating": (hh_gating, (-62.0,), True),
    "hill_dose_response": (hill_dose_response, (np.array([1.0, 100.0, 0.2, 1.1]),), True),
    "ray_sphere_hits": (ray_sphere_hits, (np.array([0.2, 0.1, 4.0]),), True),
    "snell_spot": (snell_spot, (np.array([0.4, 0.1]),), True),
    "fresnel_reflectance": (fresnel_reflectance, (np.array([0.2, 0.7, 1.1]),), True),
    "lfilter_loop": (lfilter_loop, (np.array([0.3, 0.4, 0.2]),), True),
    "butter_like_filter": (butter_like_filter, (np.array([0.2, 0.4, 0.2]),), True),
    "iir_by_feedback": (iir_by_feedback, (0.6,), True),
    "windowed_power": (windowed_power, (np.sin(np.linspace(0, 7, 12)) + 0.1,), True),
    "gaussian_smooth": (gaussian_smooth, (1.3,), True),
    "ebm_albedo": (ebm_albedo, (np.array([203.3, 2.09]),), True),
    "ebm_interp": (ebm_interp, (np.array([-25.0, -5.0, 12.0, 24.0, 8.0, -15.0]),), True),
    "carbon_cumsum": (carbon_cumsum, (np.array([5.0, 7.0, 9.0, 10.0, 8.0]),), True),
    "bucket_model": (bucket_model, (np.array([10.0, 0.0, 30.0, 80.0, 5.0, 60.0]),), True),
}

# Second order (jvp, hvp, Hessian) on a few cheap representatives in the quick run, on
# every probe that has it under `pytest --long` (tests/sweeps.py): the test budget.
SECOND = (
    set(PROBES)
    if long_run()
    else {"lj_periodic", "mass_action", "michaelis_menten_sse", "iir_by_feedback"}
)
test_probe, test_float32 = probe_tests(
    {k: (f, args, second and k in SECOND) for k, (f, args, second) in PROBES.items()}
)
