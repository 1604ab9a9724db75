"""wait_for_quiet: timings wait (bounded) for a quiet machine and say whether they got one."""

from onnx_light_dev import environment


class FakeMachine:
    """A load average that falls by `step` each poll, and a clock that the polls advance."""

    def __init__(self, loads):
        self.loads = list(loads)
        self.now = 0.0
        self.polls = 0

    def loadavg(self):
        load = self.loads[min(self.polls, len(self.loads) - 1)]
        self.polls += 1
        return (load, load, load)

    def sleep(self, seconds):
        self.now += seconds

    def clock(self):
        return self.now


def test_returns_at_once_when_the_machine_is_already_quiet():
    m = FakeMachine([0.2])
    assert environment.wait_for_quiet(0.5, 600, loadavg=m.loadavg, sleep=m.sleep, clock=m.clock) == (True, 0.2)
    assert m.now == 0


def test_waits_until_the_load_falls_below_the_threshold():
    m = FakeMachine([3.0, 1.5, 0.9, 0.4])
    quiet, load = environment.wait_for_quiet(0.5, 600, poll_s=10, loadavg=m.loadavg, sleep=m.sleep, clock=m.clock)
    assert (quiet, load) == (True, 0.4)
    assert m.now == 30


def test_gives_up_after_the_timeout_and_says_the_machine_was_not_quiet():
    m = FakeMachine([4.0])
    quiet, load = environment.wait_for_quiet(0.5, 60, poll_s=10, loadavg=m.loadavg, sleep=m.sleep, clock=m.clock)
    assert (quiet, load) == (False, 4.0)
    assert 60 <= m.now <= 70
