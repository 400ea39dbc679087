#!/usr/bin/perl
# A small Moose class over an in-memory SQLite database (DBI, DBD::SQLite):
# the kind of program whose profile spans many modules, some of them XS,
# with string evals (Moose's generated accessors) and callbacks.
use strict;
use warnings;

package Inventory::Item;
use Moose;

has name  => (is => 'ro', isa => 'Str', required => 1);
has price => (is => 'rw', isa => 'Num', default => 0);
has count => (is => 'rw', isa => 'Int', default => 0);

sub value { my $self = shift; return $self->price * $self->count }

__PACKAGE__->meta->make_immutable;
no Moose;

package Inventory;
use Moose;
use DBI;

has dbh => (is => 'ro', lazy => 1, builder => '_build_dbh');

sub _build_dbh {
    my $dbh = DBI->connect('dbi:SQLite:dbname=:memory:', '', '', {RaiseError => 1, PrintError => 0});
    $dbh->do('CREATE TABLE item (name TEXT PRIMARY KEY, price REAL, count INTEGER)');
    return $dbh;
}

sub add {
    my ($self, $item) = @_;
    $self->dbh->do('INSERT INTO item VALUES (?, ?, ?)', undef, $item->name, $item->price, $item->count);
}

sub items {
    my $self = shift;
    my $rows = $self->dbh->selectall_arrayref('SELECT name, price, count FROM item ORDER BY name');
    return map { Inventory::Item->new(name => $_->[0], price => $_->[1], count => $_->[2]) } @$rows;
}

sub total {
    my $self = shift;
    my $t = 0;
    $t += $_->value for $self->items;
    return $t;
}

__PACKAGE__->meta->make_immutable;
no Moose;

package main;

my $inv = Inventory->new;
$inv->add(Inventory::Item->new(name => "item$_", price => $_ / 4, count => $_ % 7)) for 1 .. 200;
my $total = 0;
$total += $inv->total for 1 .. 3;
print "total $total\n";
