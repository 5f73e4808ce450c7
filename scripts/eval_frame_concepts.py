"""How many PICO frame slots the concept layer maps to a concept.

Reads the frames in ``questions/*.yaml`` and ``../shared/data/bench/frames/*.json`` and maps
every problem, co-problem, population, intervention and comparison value with the same code
``ebm ask`` uses (``ebm.frame_concepts.slot_concepts``: the dictionary matcher, generic
concepts dropped). A value counts as mapped when it keeps at least one concept, and as mapped
in its group when one of them is of the groups the slot is about (problems: disorders;
interventions and comparisons: chemicals, procedures, devices; populations: any).

Usage:
  python scripts/eval_frame_concepts.py [--shared DIR] [--list] [--json]
Needs a concept index (`ebm setup`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ebm.errors import EbmError  # noqa: E402

SLOTS = ("problem", "co_problems", "population", "intervention", "comparison")


def frame_files(shared: Path) -> list[Path]:
    return sorted((ROOT / "questions").glob("*.yaml")) + sorted((shared / "data/bench/frames").glob("*.json"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--list", action="store_true", help="print every slot value and its concepts")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from ebm.frame import load_frame
    from ebm.frame_concepts import SLOT_GROUPS, slot_concepts
    from ebm.resources import Resources

    try:
        resources = Resources.load()
        matcher = resources.matcher
        vocabulary = resources.vocabulary
        counts = {s: [0, 0, 0] for s in SLOTS}  # values, mapped, mapped in the slot's groups
        rows = []
        for path in frame_files(args.shared):
            frame = load_frame(path)
            for slot in SLOTS:
                value = getattr(frame, slot)
                values = (value,) if isinstance(value, str) else tuple(value or ())
                for v in values:
                    sv = slot_concepts(slot, v, matcher, vocabulary)
                    wanted = SLOT_GROUPS.get(slot, ())
                    in_group = any(not wanted or any(g in c.groups for g in wanted) for c in sv.concepts)
                    c = counts[slot]
                    c[0] += 1
                    c[1] += bool(sv.concepts)
                    c[2] += in_group
                    rows.append(
                        {
                            "frame": path.stem,
                            "slot": slot,
                            "value": v,
                            "concepts": [f"{x.name} ({x.cui})" for x in sv.concepts],
                            "in_group": in_group,
                        }
                    )
    except EbmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    if args.json:
        print(json.dumps({"counts": counts, "total": total, "values": rows}, indent=2))
        return 0
    if args.list:
        for r in rows:
            mark = " " if r["in_group"] else "!"
            found = "; ".join(r["concepts"]) or "-"
            print(f"{mark} {r['frame']:32s} {r['slot']:12s} {r['value']!r}: {found}")
    print(f"{'slot':12s} values  mapped  in its groups")
    for slot, (n, mapped, grouped) in counts.items():
        print(f"{slot:12s} {n:6d}  {mapped:6d}  {grouped:6d}")
    print(f"{'all':12s} {total[0]:6d}  {total[1]:6d}  {total[2]:6d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
