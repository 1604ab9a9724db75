"""The interleaving rule of cnn_thresholds: block order, per-block ratios, the median's
interval (against the published order-statistic ranks of the 95% median interval), and
the settings the flags describe. No timing."""

from absl import app
from absl.testing import absltest, parameterized

from benchmarks import cnn_thresholds


class BlockOrderTest(parameterized.TestCase):
    def test_every_setting_runs_once_per_block(self) -> None:
        for block in range(7):
            self.assertCountEqual(cnn_thresholds.block_order(3, block), [0, 1, 2])

    def test_order_rotates_by_block(self) -> None:
        orders = [cnn_thresholds.block_order(3, b) for b in range(4)]
        self.assertEqual(orders, [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 1, 2]])

    def test_every_setting_takes_every_position_over_count_blocks(self) -> None:
        count = 5
        firsts = {cnn_thresholds.block_order(count, b)[0] for b in range(count)}
        self.assertEqual(firsts, set(range(count)))


class BlockRatiosTest(absltest.TestCase):
    def test_ratios_are_to_the_first_setting_of_the_same_block(self) -> None:
        ratios = cnn_thresholds.block_ratios([[2.0, 1.0, 4.0], [4.0, 3.0, 2.0]])
        self.assertEqual(ratios, [[1.0, 0.5, 2.0], [1.0, 0.75, 0.5]])

    def test_a_load_change_between_blocks_cancels(self) -> None:
        # The second block is uniformly twice as slow: the ratios are unchanged.
        ratios = cnn_thresholds.block_ratios([[2.0, 1.5], [4.0, 3.0]])
        self.assertEqual(ratios[0], ratios[1])


class MedianIntervalTest(parameterized.TestCase):
    # 95% distribution-free median intervals: ranks (j, n + 1 - j) from the binomial table
    # (e.g. Conover, Practical Nonparametric Statistics, table A3): n=6 -> (1, 6),
    # n=10 -> (2, 9), n=20 -> (6, 15), n=30 -> (10, 21).
    @parameterized.parameters((6, 1, 6), (10, 2, 9), (20, 6, 15), (30, 10, 21))
    def test_interval_ranks(self, n: int, low_rank: int, high_rank: int) -> None:
        values = [float(v) for v in reversed(range(1, n + 1))]  # rank r has value r
        median, low, high, exact = cnn_thresholds.median_interval(values)
        self.assertEqual((low, high), (float(low_rank), float(high_rank)))
        self.assertEqual(median, (n + 1) / 2)
        self.assertTrue(exact)

    def test_too_few_values_give_the_range_and_say_so(self) -> None:
        self.assertEqual(cnn_thresholds.median_interval([3.0, 1.0, 2.0]), (2.0, 1.0, 3.0, False))

    def test_no_values_is_an_error(self) -> None:
        with self.assertRaises(ValueError):
            cnn_thresholds.median_interval([])


class SettingsTest(absltest.TestCase):
    def test_portable_first_then_each_parameter_then_combined_then_spins(self) -> None:
        found = cnn_thresholds.settings(["2"], ["65536"], ["16384"], ["4/262144"], ["5000"])
        self.assertEqual(
            [label for label, _, _ in found],
            [
                "portable",
                "conv minimum_tasks=2",
                "depthwise minimum=65536",
                "SE minimum=16384",
                "conv minimum_tasks=4 + depthwise minimum=262144",
                "portable, workers spin 5000 us",
            ],
        )
        self.assertEqual(found[0][1], {})
        self.assertEqual([spin for _, _, spin in found], [None, None, None, None, None, 5000])
        self.assertEqual(found[5][1], {})
        for key in cnn_thresholds.CONV_KEYS:
            self.assertEqual(found[1][1][key], {"parallel.minimum_tasks": 2})
            self.assertEqual(found[2][1][key], {"parallel.depthwise_minimum_multiply_adds": 65536})
            self.assertEqual(
                found[4][1][key], {"parallel.minimum_tasks": 4, "parallel.depthwise_minimum_multiply_adds": 262144}
            )
        self.assertEqual(found[3][1], {cnn_thresholds.SE_KEY: {"parallel.minimum_elements": 16384}})

    def test_malformed_combined_entry_is_a_usage_error(self) -> None:
        with self.assertRaises(app.UsageError):
            cnn_thresholds.settings([], [], [], ["2"])


if __name__ == "__main__":
    absltest.main()
