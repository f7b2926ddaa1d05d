"""The encoder and the language detector run offline (issue 31): both load from their packages, in a process where
every network connection fails, with an empty home and temporary directory (no model cached by an earlier run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, socket, sys

def refuse(*args, **kwargs):
    raise OSError("network access attempted")

# Before anything is imported: a download at import or first use fails loudly.
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse

from factcheck import semantic

vectors = semantic.embed([
    "Drinking hot lemon water every morning cures type 2 diabetes within three weeks",
    "Heißes Zitronenwasser jeden Morgen heilt Typ-2-Diabetes innerhalb von drei Wochen",
    "The city council approved a new budget for road repairs and public libraries",
])
print(json.dumps({
    "shape": list(vectors.shape),
    "translation": float(vectors[0] @ vectors[1]),
    "unrelated": float(vectors[0] @ vectors[2]),
    "languages": [semantic.detect_language(text) for text in (
        "Heißes Zitronenwasser jeden Morgen heilt Typ-2-Diabetes innerhalb von drei Wochen",
        "Boire de l'eau chaude citronnée chaque matin guérit le diabète en trois semaines",
        "Beber agua caliente con limón cada mañana cura la diabetes en tres semanas",
    )],
}))
"""


def test_the_encoder_and_the_language_detector_answer_with_the_network_cut_off(tmp_path):
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT),
           "XDG_CACHE_HOME": str(home / ".cache")}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["shape"] == [3, 512]
    assert answer["translation"] > 0.7 > answer["unrelated"]
    assert answer["languages"] == ["de", "fr", "es"]
    # Nothing was fetched into a cache on the way: the models are the packages' own files.
    assert not [path for path in (*home.rglob("*"), *tmp.rglob("*")) if path.is_file() and path.stat().st_size > 1e6]
