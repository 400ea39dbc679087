# lib/Ünïcode.pm - a module with a non-ASCII file name and package name,
# for utf8-names.pl.
use utf8;
package Ünïcode;
use strict;
use warnings;

sub grüße { my $wer = shift; return "Grüße, $wer!" }

sub zähle { my $n = 0; $n += $_ for @_; return $n }

1;
