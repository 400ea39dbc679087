# exit from inside nested subs, one of them called from an eval and a
# sort block: the calls open end before END blocks run.
sub leaf { return $_[0] + 1 }
sub stop { leaf(1); exit 3 }
sub middle { my @x = sort { $a <=> $b } (2, 1); eval { stop() }; leaf(2) }
END { leaf(3) }
middle();
