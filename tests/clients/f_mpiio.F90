! MPI-IO from Fortran, through the "use mpi" bindings or, built with -DUSE_F08, through
! "use mpi_f08". Run as `f_mpiio DIR`; writes into DIR:
!   subarray.dat  a global NY x NX integer array in Fortran order, each rank a block of columns,
!                 through a view built from MPI_Type_create_subarray (write_all, read_all)
!   pointer.dat   blocks placed with the individual file pointer (MPI_File_seek, MPI_File_write)
!   ordered.dat   records of (rank+1)*3 integers in rank order (MPI_File_write_ordered)
!   handle.dat    written by C through a Fortran handle (MPI_File_f2c, MPI_File_c2f), and a file
!                 C opened, written and closed from Fortran
! Each file is read back through MPI-IO and by Fortran stream I/O, and checked against its model.
#ifdef USE_F08
#define FILE_T type(MPI_File)
#define TYPE_T type(MPI_Datatype)
#define INFO_T type(MPI_Info)
#define STATUS_DECL type(MPI_Status) :: status
#define FINT(h) h%MPI_VAL
#else
#define FILE_T integer
#define TYPE_T integer
#define INFO_T integer
#define STATUS_DECL integer :: status(MPI_STATUS_SIZE)
#define FINT(h) h
#endif
module f_checks
    implicit none
    integer :: nerr = 0
contains
    subroutine check(cond, what)
        logical, intent(in) :: cond
        character(len=*), intent(in) :: what
        if (.not. cond) then
            nerr = nerr + 1
            write (0, '(a,a)') 'FAIL: ', what
        end if
    end subroutine check

    ! The whole file by Fortran stream I/O, compared with the model
    subroutine check_file(path, expected)
        character(len=*), intent(in) :: path
        integer, intent(in) :: expected(:)
        integer, allocatable :: got(:)
        integer :: u, ios
        integer(8) :: bytes
        inquire (file=path, size=bytes)
        call check(bytes == 4*size(expected), 'size of '//path)
        if (bytes /= 4*size(expected)) return
        allocate (got(size(expected)))
        open (newunit=u, file=path, access='stream', form='unformatted', status='old', &
              action='read', iostat=ios)
        call check(ios == 0, 'open '//path)
        read (u, iostat=ios) got
        close (u)
        call check(ios == 0 .and. all(got == expected), 'contents of '//path)
    end subroutine check_file
end module f_checks

program f_mpiio
#ifdef USE_F08
    use mpi_f08
#else
    use mpi
#endif
    use, intrinsic :: iso_c_binding
    use f_checks
    implicit none
    interface
        ! C writes through the handle it is given and hands it back converted again
        integer(c_int) function c_write_through(fh, rank, n) bind(C, name='c_write_through')
            import :: c_int
            integer(c_int), value :: fh, rank, n
        end function c_write_through
        integer(c_int) function c_under_ampio() bind(C, name='c_under_ampio')
            import :: c_int
        end function c_under_ampio
        integer(c_int) function c_open(path, comm) bind(C, name='c_open')
            import :: c_int, c_char
            character(kind=c_char), intent(in) :: path(*)
            integer(c_int), value :: comm
        end function c_open
    end interface
    integer, parameter :: NY = 6, NXL = 5, NPTR = 9
    FILE_T :: fh, fh2
    TYPE_T :: sub
    INFO_T :: info
    logical :: flag
    character(len=64) :: hint
    STATUS_DECL
    integer :: ierr, rank, nprocs, nx, i, j, r, k, n, total, fint
    integer :: gsizes(2), lsizes(2), starts(2)
    integer, allocatable :: local(:, :), back(:, :), model(:), buf(:)
    integer(kind=MPI_OFFSET_KIND) :: disp, pos
    character(len=4096) :: dir

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call get_command_argument(1, dir)
    nx = NXL*nprocs

    ! 1. subarray view: rank r owns columns r*NXL+1 .. (r+1)*NXL of the NY x nx array
    allocate (local(NY, NXL), back(NY, NXL))
    do j = 1, NXL
        do i = 1, NY
            local(i, j) = value(i, rank*NXL + j)
        end do
    end do
    gsizes = [NY, nx]
    lsizes = [NY, NXL]
    starts = [0, rank*NXL]
    call MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_FORTRAN, MPI_INTEGER, &
                                  sub, ierr)
    call MPI_Type_commit(sub, ierr)
    call MPI_File_open(MPI_COMM_WORLD, trim(dir)//'/subarray.dat', &
                       MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
    call check(ierr == MPI_SUCCESS, 'open subarray.dat')
    ! the I/O is ampio's exactly when ampio is loaded: only ampio reports this hint
    call MPI_File_get_info(fh, info, ierr)
    call MPI_Info_get(info, 'ampio_fcoll', len(hint), hint, flag, ierr)
    call MPI_Info_free(info, ierr)
    call check(flag .eqv. (c_under_ampio() /= 0), 'the ampio_fcoll hint is there under ampio only')
    disp = 0
    call MPI_File_set_view(fh, disp, MPI_INTEGER, sub, 'native', MPI_INFO_NULL, ierr)
    call MPI_File_write_all(fh, local, NY*NXL, MPI_INTEGER, status, ierr)
    call check(ierr == MPI_SUCCESS, 'write_all')
    call MPI_Get_count(status, MPI_INTEGER, n, ierr)
    call check(n == NY*NXL, 'write_all count')
    call MPI_File_get_position(fh, pos, ierr)
    call check(pos == NY*NXL, 'position after write_all')
    pos = 0
    call MPI_File_seek(fh, pos, MPI_SEEK_SET, ierr)
    back = -1
    call MPI_File_read_all(fh, back, NY*NXL, MPI_INTEGER, status, ierr)
    call check(ierr == MPI_SUCCESS .and. all(back == local), 'read_all through the subarray view')
    call MPI_File_close(fh, ierr)
    call check(ierr == MPI_SUCCESS, 'close subarray.dat')
    call MPI_Type_free(sub, ierr)

    ! 2. individual pointer: rank r's block of NPTR integers at r*NPTR, written in two pieces
    call MPI_File_open(MPI_COMM_WORLD, trim(dir)//'/pointer.dat', &
                       MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
    allocate (buf(NPTR))
    buf = [(value(k, 1000 + rank), k = 1, NPTR)]
    pos = 4*NPTR*rank
    call MPI_File_seek(fh, pos, MPI_SEEK_SET, ierr)
    call MPI_File_write(fh, buf, 4, MPI_INTEGER, status, ierr)
    call MPI_File_write(fh, buf(5:), NPTR - 4, MPI_INTEGER, status, ierr)
    call check(ierr == MPI_SUCCESS, 'write with the individual pointer')
    call MPI_File_get_position(fh, pos, ierr)
    call check(pos == 4*NPTR*(rank + 1), 'individual pointer after two writes')
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    r = mod(rank + 1, nprocs)
    pos = -4*NPTR*(rank + 1 - r)
    call MPI_File_seek(fh, pos, MPI_SEEK_CUR, ierr)
    buf = -1
    call MPI_File_read(fh, buf, NPTR, MPI_INTEGER, status, ierr)
    call check(all(buf == [(value(k, 1000 + r), k = 1, NPTR)]), 'read the block of the next rank')
    call MPI_File_close(fh, ierr)
    deallocate (buf)

    ! 3. shared pointer: rank r appends (r+1)*3 integers, in rank order
    call MPI_File_open(MPI_COMM_WORLD, trim(dir)//'/ordered.dat', &
                       MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
    n = (rank + 1)*3
    allocate (buf(n))
    buf = [(value(k, 2000 + rank), k = 1, n)]
    call MPI_File_write_ordered(fh, buf, n, MPI_INTEGER, status, ierr)
    call check(ierr == MPI_SUCCESS, 'write_ordered')
    total = 3*nprocs*(nprocs + 1)/2
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_get_position_shared(fh, pos, ierr)
    if (c_under_ampio() /= 0) then
        call check(pos == 4*total, 'shared pointer after write_ordered')
    else if (pos /= 4*total) then
        ! Open MPI's OMPIO and MPICH's ROMIO sometimes report a stale position here
        write (0, '(a,i0,a,i0,a,i0)') 'NATIVE-DEFECT: rank ', rank, &
            ': shared pointer after write_ordered is ', pos, ', expected ', 4*total
    end if
    pos = 0
    call MPI_File_seek_shared(fh, pos, MPI_SEEK_SET, ierr)
    buf = -1
    call MPI_File_read_ordered(fh, buf, n, MPI_INTEGER, status, ierr)
    call check(all(buf == [(value(k, 2000 + rank), k = 1, n)]), 'read_ordered')
    call MPI_File_close(fh, ierr)
    deallocate (buf)

    ! 4. handles across languages: C writes through this Fortran handle; a C handle used here
    call MPI_File_open(MPI_COMM_WORLD, trim(dir)//'/handle.dat', &
                       MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
    fint = c_write_through(FINT(fh), rank, NPTR)
    call check(fint == FINT(fh), 'MPI_File_c2f(MPI_File_f2c(fh)) == fh')
    call MPI_File_close(fh, ierr)
    call check(ierr == MPI_SUCCESS, 'close handle.dat')
    FINT(fh2) = c_open(trim(dir)//'/from_c.dat'//c_null_char, FINT(MPI_COMM_WORLD))
    allocate (buf(NPTR))
    buf = [(value(k, 4000 + rank), k = 1, NPTR)]
    pos = 4*NPTR*rank
    call MPI_File_write_at_all(fh2, pos, buf, NPTR, MPI_INTEGER, status, ierr)
    call check(ierr == MPI_SUCCESS, 'write_at_all through a handle C opened')
    call MPI_File_close(fh2, ierr)
    call check(ierr == MPI_SUCCESS, 'close from_c.dat')
    deallocate (buf)

    ! the files against their models, by Fortran stream I/O
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        allocate (model(NY*nx))
        do j = 1, nx
            do i = 1, NY
                model((j - 1)*NY + i) = value(i, j)
            end do
        end do
        call check_file(trim(dir)//'/subarray.dat', model)
        deallocate (model)
        allocate (model(NPTR*nprocs))
        model = [((value(k, 1000 + r), k = 1, NPTR), r = 0, nprocs - 1)]
        call check_file(trim(dir)//'/pointer.dat', model)
        model = [((value(k, 3000 + r), k = 1, NPTR), r = 0, nprocs - 1)]
        call check_file(trim(dir)//'/handle.dat', model)
        model = [((value(k, 4000 + r), k = 1, NPTR), r = 0, nprocs - 1)]
        call check_file(trim(dir)//'/from_c.dat', model)
        deallocate (model)
        allocate (model(total))
        model = [((value(k, 2000 + r), k = 1, 3*(r + 1)), r = 0, nprocs - 1)]
        call check_file(trim(dir)//'/ordered.dat', model)
    end if

    call MPI_Allreduce(MPI_IN_PLACE, nerr, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Finalize(ierr)
    if (nerr > 0) then
        if (rank == 0) write (0, '(i0,a)') nerr, ' failure(s)'
        stop 1
    end if

contains
    integer function value(i, j)
        integer, intent(in) :: i, j
        value = j*10007 + i*31 - 5
    end function value
end program f_mpiio
