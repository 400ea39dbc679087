# A daemon's start: every descriptor but the standard ones closed (as
# Proc::Daemon does, up to the limit), then files of its own opened, more
# than enough to get the number the profile's file had; they are written
# while the profiler goes on writing.  Each file must hold only what the
# program wrote; the profile must be whole.
use strict;
use warnings;
use POSIX ();

sub work { my $s = 0; $s += $_ for 1 .. 20000; return $s }

my $dir = shift // die "usage: daemon.pl DIR\n";
work();
POSIX::close($_) for 3 .. 1023;
my @fhs;
for my $i (1 .. 150) {
    open my $fh, '>', "$dir/own$i.txt" or die "open $dir/own$i.txt: $!";
    push @fhs, $fh;
}
for my $round (1 .. 100) {
    work();
    print {$_} "round $round\n" for @fhs;
}
close $_ or die "close: $!" for @fhs;
print "done\n";
