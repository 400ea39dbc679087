#!/usr/bin/perl
# The oracle for 'nytp dprof-convert': the installed dprofpp, run with
# 'dprofpp -r -O 1000000 [-F] TMON' (real times, every sub), but printing
# each sub's figures unrounded as "name TAB calls TAB excl TAB incl"
# (seconds) instead of its fixed-width table, whose %.3f columns break
# negative numbers across lines.  Only the two 'write' statements of its
# display routine are replaced; every computation is dprofpp's own.
use strict;
use warnings;

my @args = @ARGV;
my $dprofpp = $ENV{DPROFPP} // '/usr/bin/dprofpp';
open my $fh, '<', $dprofpp or die "oracle: $dprofpp: $!\n";
my $src = do { local $/; <$fh> };
close $fh;
$src =~ s/^(\s*)write;\n(.*\n)\s*write while\( length \$name \);\n/$1print "\$name\\t\$ncalls\\t\$s\\t\$cs\\n";\n$2/m
    or die "oracle: cannot find dprofpp's display writes in $dprofpp\n";
$src =~ s/^(\s*)if\( ! \$opt_q \)\{\n\s*\$\^ = 'CSTAT_top';\n\s*\}/$1# no page header/m
    or die "oracle: cannot find dprofpp's page header in $dprofpp\n";
@ARGV = ('-r', '-O', 1_000_000, @args);
$0 = 'dprofpp';
package main;
no strict;
no warnings;
eval $src;
die "oracle: $@" if $@;
exit 0;
