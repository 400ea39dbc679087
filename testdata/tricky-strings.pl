#!/usr/bin/perl
# tricky-strings.pl - sub, package and file names and string-eval sources
# holding characters a dumper must escape: tabs, quotes, backslashes,
# <script>, a carriage return, newlines.
use strict;
use warnings;
use Sub::Util qw(set_subname);

package Quote::O'Neil;     # old-style package separator: Quote::O::Neil
sub said { return qq{"she said 'hi'"} }

package main;

# Subs whose names are not identifiers (names set with Sub::Util).
my %sub = map { $_ => set_subname($_, eval "sub { q\0$_\0 }") } (
    "main::tab\there",
    "main::back\\slash",
    "main::<script>alert(1)</script>",
    "Quo\"te'Pkg::dq\"sq'",
    "Tab\tPkg::cr\rname",
);
print join('|', map { $sub{$_}->() } sort keys %sub) =~ tr/\t\r/TR/r, "\n";
print Quote::O::Neil::said(), "\n";

# String evals whose sources hold a tab, quotes, a backslash, <script>, a CR.
my @src = (
    "my \$t = \"a\\tb\";\tlength \$t",
    q{my $q = "dq \" and sq ' and bs \\\\"; length $q},
    "my \$h = '<script>x</script>'; length \$h",
    "my \$c = 1;\r\n\$c + 1",
    "# comment\n\"multi\\nline\" =~ tr/\\n//",
    qq{#line 7 "fake\tfile <b>.pl"\nsub { 'from a file name with a tab' }->()},
);
print join(' ', map { my $r = eval $_; defined $r ? $r : "err: $@" } @src), "\n";
