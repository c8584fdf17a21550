"""The scaling of trained weights across depths (Cohen, Cont, Rossier & Xu, ICML 2021; Marion et
al., JMLR 2025, §4.2): the inside model h + delta tanh(A h + b) trained on the synthetic task of
Cohen et al. at depths floor(1.2^n), 10..850, with the published code's protocol (Adam 1e-2,
torch.nn.MSELoss() below 1e-3, batches of 32); Cohen et al.'s steps (alpha, beta from the
cumulative-sum norm, the beta-scaled increments, the noise part, the root sum of squares, the
loss kept by the trend), the verdict, and Figs. 2-6 (docs/weights.md). The `cpu` preset of
`deeplimits scaling`.

Run:  python examples/weight_scaling.py [OUT_DIR] [--small]     (a few minutes on 2 CPU cores)
Writes OUT_DIR/weight_scaling.png (default docs/figures).
"""
import os
import sys

from deeplimits.studies import SCALING_PRESETS, plan_scaling

FIGURES = ["weight_scaling.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    kw = dict(SCALING_PRESETS["cpu"])
    if small:
        kw.update(depths=[4, 6, 8], samples=64, max_epochs=2, stop_loss=0.5)
    res = plan_scaling(**kw).run()
    print(res.report())
    path = os.path.join(out, FIGURES[0])
    res.plot(path)
    return [path]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
