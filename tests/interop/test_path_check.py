"""Tests of path_check.py on made-up server qlogs: the checks can fail.

Run: python3 -m unittest tests/interop/test_path_check.py (or pytest).
"""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from path_check import check  # noqa: E402


def addr(port):
    return {"ip_v4": "127.0.0.1", "port_v4": port}


def state(new, port):
    return {"name": "quic:migration_state_updated", "data": {"new": new, "tuple_remote": addr(port)}}


def packet(name, kind, data):
    return {"name": name, "data": {"frames": [{"frame_type": kind, "data": data}]}}


def move(old, new, tokens=("aa", "bb"), answer="aa", end="migration_complete"):
    """A rebinding from port `old` to `new` as quiclab logs it."""
    recs = [state("probing_started", old), state("migration_started", new)]
    recs += [packet("quic:packet_sent", "path_challenge", t) for t in tokens]
    if answer:
        recs.append(packet("quic:packet_received", "path_response", answer))
    if end:
        recs.append(state(end, new))
    return recs


class PathCheck(unittest.TestCase):
    def run_check(self, recs, **kw):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "x_server.sqlog"
            path.write_text("".join("\x1e" + json.dumps(r) + "\n" for r in recs))
            return check(path, kw.get("min_migrations", 1))

    def test_validated_moves_pass(self):
        out = self.run_check(move(1, 2) + move(2, 3, ("cc", "dd"), "cc"))
        self.assertIn("2 migrations", out)

    def test_no_migration_fails(self):
        with self.assertRaises(SystemExit):
            self.run_check([state("probing_started", 1)])

    def test_old_path_not_challenged_fails(self):
        recs = move(1, 2)[1:]  # no probing_started
        with self.assertRaisesRegex(SystemExit, "previous path"):
            self.run_check(recs)

    def test_one_challenge_only_fails(self):
        with self.assertRaisesRegex(SystemExit, "one per path"):
            self.run_check(move(1, 2, tokens=("aa",)))

    def test_response_to_no_challenge_fails(self):
        with self.assertRaisesRegex(SystemExit, "PATH_RESPONSE"):
            self.run_check(move(1, 2, answer="ff"))

    def test_abandoned_validation_fails(self):
        with self.assertRaisesRegex(SystemExit, "failed"):
            self.run_check(move(1, 2, answer=None, end="migration_abandoned"))

    def test_unfinished_earlier_move_fails(self):
        with self.assertRaisesRegex(SystemExit, "never validated"):
            self.run_check(move(1, 2, answer=None, end=None) + move(2, 3))

    def test_last_move_cut_short_by_the_close_passes(self):
        out = self.run_check(move(1, 2) + move(2, 3, answer=None, end=None))
        self.assertIn("cut short", out)
        self.assertIn("1 migrations", out)


if __name__ == "__main__":
    unittest.main()
