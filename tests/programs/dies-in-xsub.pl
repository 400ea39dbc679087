# The program dies inside an xsub's callback, called from the main
# program: every call open then ends with the process, before the END
# block's calls (whose contexts take the places of the ones left).
use List::Util qw(first);
sub leaf { return $_[0] + 1 }
sub pick { return first { leaf($_); 0 } @_ }
END { leaf(5); pick(7) }
my $t = leaf(0);
pick(1 .. 3);
first { leaf($_); die "no more\n" if $_ == 2; 0 } 1 .. 3;
