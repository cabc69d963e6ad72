"""`sdy-insert-explicit-reshards` (Shardy's ``export/insert_explicit_reshards.cc`` and
``export/explicit_reshards_util.cc``): the pass (`insert_explicit_reshards`), the reshards of one
op (`process_op`), the all-reduces of unreduced axes (`unreduced`), and the shared helpers
(`explicit_reshards_util`)."""
