; emit-llvm small.ms fib int
; ModuleID = 'm0.'
source_filename = "m0."
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define internal fastcc { i1, i64 } @m0.fib.0(ptr %0, i32 %1, i64 %2) unnamed_addr {
entry:
  %scratch34.i40 = alloca [4 x [2 x i64]], align 16
  %scratch34.i = alloca [4 x [2 x i64]], align 16
  %scratch34 = alloca [4 x [2 x i64]], align 16
  %vm = load ptr, ptr %0, align 8, !invariant.load !0
  %3 = icmp slt i64 %2, 2
  br i1 %3, label %then, label %fast

common.ret:                                       ; preds = %join33, %badtype31, %fail27, %fail21, %fail6, %stop, %then
  %common.ret.op = phi { i1, i64 } [ %4, %then ], [ zeroinitializer, %stop ], [ zeroinitializer, %fail6 ], [ zeroinitializer, %fail21 ], [ zeroinitializer, %fail27 ], [ zeroinitializer, %badtype31 ], [ %85, %join33 ]
  ret { i1, i64 } %common.ret.op

then:                                             ; preds = %entry
  %4 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %2, 1
  br label %common.ret

fast:                                             ; preds = %entry
  %5 = add nsw i64 %2, -1
  %6 = add i32 %1, 1
  %7 = getelementptr i8, ptr %vm, i64 268
  %max = load i32, ptr %7, align 4
  %8 = getelementptr i8, ptr %vm, i64 272
  %limit = load i64, ptr %8, align 4
  %sp = tail call ptr @llvm.stacksave.p0()
  %9 = ptrtoint ptr %sp to i64
  %10 = icmp ule i64 %limit, %9
  %11 = getelementptr i8, ptr %vm, i64 280
  %interrupt = load volatile i32, ptr %11, align 4
  %12 = getelementptr i8, ptr %vm, i64 288
  %deadline = load i64, ptr %12, align 4
  %13 = zext i32 %interrupt to i64
  %14 = or i64 %deadline, %13
  %15 = icmp eq i64 %14, 0
  %16 = icmp sgt i32 %max, %1
  %.not39 = and i1 %16, %10
  %.not36 = and i1 %.not39, %15
  br i1 %.not36, label %go, label %slow3, !prof !1

slow3:                                            ; preds = %fast
  %17 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %17, align 4
  %18 = tail call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %18, label %go, label %stop

go:                                               ; preds = %slow3, %fast
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch34.i40)
  %19 = icmp eq i64 %2, 2
  br i1 %19, label %then.i65, label %fast.i42

then.i65:                                         ; preds = %go
  %20 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %5, 1
  br label %m0.fib.twin.1.exit66

fast.i42:                                         ; preds = %go
  %21 = add nsw i64 %2, -2
  %22 = add i32 %1, 2
  %max.i43 = load i32, ptr %7, align 4
  %.not.i44 = icmp sgt i32 %max.i43, %6
  br i1 %.not.i44, label %go.i48, label %slow3.i45, !prof !1

slow3.i45:                                        ; preds = %fast.i42
  %23 = getelementptr i8, ptr %vm, i64 264
  store i32 %6, ptr %23, align 4
  %24 = tail call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %24, label %go.i48, label %stop.i46

go.i48:                                           ; preds = %slow3.i45, %fast.i42
  %25 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %22, i64 %21)
  %ok4.i49 = extractvalue { i1, i64 } %25, 0
  br i1 %ok4.i49, label %ok5.i51, label %fail6.i50, !prof !1

stop.i46:                                         ; preds = %slow3.i45
  tail call void @mist_rt_fail(ptr nonnull %0, i32 15)
  br label %m0.fib.twin.1.exit66

ok5.i51:                                          ; preds = %go.i48
  %26 = extractvalue { i1, i64 } %25, 1
  %27 = add nsw i64 %2, -3
  %28 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %22, i64 %27)
  %ok19.i52 = extractvalue { i1, i64 } %28, 0
  br i1 %ok19.i52, label %ok20.i54, label %fail21.i53, !prof !1

fail6.i50:                                        ; preds = %go.i48
  tail call void @mist_rt_fail(ptr nonnull %0, i32 16)
  br label %m0.fib.twin.1.exit66

ok20.i54:                                         ; preds = %ok5.i51
  %29 = extractvalue { i1, i64 } %28, 1
  %30 = tail call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %26, i64 %29)
  %31 = extractvalue { i64, i1 } %30, 1
  br i1 %31, label %slow23.i57, label %fast22.i55, !prof !2

fail21.i53:                                       ; preds = %ok5.i51
  tail call void @mist_rt_fail(ptr nonnull %0, i32 20)
  br label %m0.fib.twin.1.exit66

fast22.i55:                                       ; preds = %ok20.i54
  %32 = extractvalue { i64, i1 } %30, 0
  br label %join33.i56

slow23.i57:                                       ; preds = %ok20.i54
  %vals25.i58 = getelementptr inbounds i8, ptr %scratch34.i40, i64 32
  store i64 3, ptr %scratch34.i40, align 16
  %33 = getelementptr inbounds i8, ptr %scratch34.i40, i64 8
  store i64 %26, ptr %33, align 8
  %34 = getelementptr inbounds i8, ptr %scratch34.i40, i64 16
  store i64 3, ptr %34, align 16
  %35 = getelementptr inbounds i8, ptr %scratch34.i40, i64 24
  store i64 %29, ptr %35, align 8
  %36 = getelementptr i8, ptr %vm, i64 264
  store i32 %6, ptr %36, align 4
  %37 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch34.i40, ptr nonnull %vals25.i58)
  br i1 %37, label %ok26.i60, label %fail27.i59, !prof !1

ok26.i60:                                         ; preds = %slow23.i57
  %tag28.i61 = load i64, ptr %vals25.i58, align 16
  %38 = getelementptr inbounds i8, ptr %scratch34.i40, i64 40
  %pay29.i62 = load i64, ptr %38, align 8
  %39 = icmp eq i64 %tag28.i61, 3
  br i1 %39, label %join33.i56, label %badtype31.i63, !prof !1

fail27.i59:                                       ; preds = %slow23.i57
  call void @mist_rt_fail(ptr nonnull %0, i32 21)
  br label %m0.fib.twin.1.exit66

badtype31.i63:                                    ; preds = %ok26.i60
  %vals32.i64 = getelementptr inbounds i8, ptr %scratch34.i40, i64 48
  store i64 %tag28.i61, ptr %vals32.i64, align 16
  %40 = getelementptr inbounds i8, ptr %scratch34.i40, i64 56
  store i64 %pay29.i62, ptr %40, align 8
  %41 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals32.i64, i32 22)
  call void @mist_rt_fail(ptr nonnull %0, i32 23)
  br label %m0.fib.twin.1.exit66

join33.i56:                                       ; preds = %ok26.i60, %fast22.i55
  %42 = phi i64 [ %32, %fast22.i55 ], [ %pay29.i62, %ok26.i60 ]
  %43 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %42, 1
  br label %m0.fib.twin.1.exit66

m0.fib.twin.1.exit66:                             ; preds = %then.i65, %stop.i46, %fail6.i50, %fail21.i53, %fail27.i59, %badtype31.i63, %join33.i56
  %common.ret.op.i47 = phi { i1, i64 } [ %20, %then.i65 ], [ zeroinitializer, %stop.i46 ], [ zeroinitializer, %fail6.i50 ], [ zeroinitializer, %fail21.i53 ], [ zeroinitializer, %fail27.i59 ], [ zeroinitializer, %badtype31.i63 ], [ %43, %join33.i56 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch34.i40)
  %ok4 = extractvalue { i1, i64 } %common.ret.op.i47, 0
  br i1 %ok4, label %ok5, label %fail6, !prof !1

stop:                                             ; preds = %slow3
  tail call void @mist_rt_fail(ptr nonnull %0, i32 3)
  br label %common.ret

ok5:                                              ; preds = %m0.fib.twin.1.exit66
  %44 = extractvalue { i1, i64 } %common.ret.op.i47, 1
  %45 = add nsw i64 %2, -2
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch34.i)
  %46 = icmp ult i64 %45, 2
  br i1 %46, label %then.i, label %fast.i

then.i:                                           ; preds = %ok5
  %47 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %45, 1
  br label %m0.fib.twin.1.exit

fast.i:                                           ; preds = %ok5
  %48 = add nsw i64 %2, -3
  %49 = add i32 %1, 2
  %max.i = load i32, ptr %7, align 4
  %.not.i = icmp sgt i32 %max.i, %6
  br i1 %.not.i, label %go.i, label %slow3.i, !prof !1

slow3.i:                                          ; preds = %fast.i
  %50 = getelementptr i8, ptr %vm, i64 264
  store i32 %6, ptr %50, align 4
  %51 = call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %51, label %go.i, label %stop.i

go.i:                                             ; preds = %slow3.i, %fast.i
  %52 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %49, i64 %48)
  %ok4.i = extractvalue { i1, i64 } %52, 0
  br i1 %ok4.i, label %ok5.i, label %fail6.i, !prof !1

stop.i:                                           ; preds = %slow3.i
  call void @mist_rt_fail(ptr nonnull %0, i32 15)
  br label %m0.fib.twin.1.exit

ok5.i:                                            ; preds = %go.i
  %53 = extractvalue { i1, i64 } %52, 1
  %54 = add nsw i64 %2, -4
  %55 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %49, i64 %54)
  %ok19.i = extractvalue { i1, i64 } %55, 0
  br i1 %ok19.i, label %ok20.i, label %fail21.i, !prof !1

fail6.i:                                          ; preds = %go.i
  call void @mist_rt_fail(ptr nonnull %0, i32 16)
  br label %m0.fib.twin.1.exit

ok20.i:                                           ; preds = %ok5.i
  %56 = extractvalue { i1, i64 } %55, 1
  %57 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %53, i64 %56)
  %58 = extractvalue { i64, i1 } %57, 1
  br i1 %58, label %slow23.i, label %fast22.i, !prof !2

fail21.i:                                         ; preds = %ok5.i
  call void @mist_rt_fail(ptr nonnull %0, i32 20)
  br label %m0.fib.twin.1.exit

fast22.i:                                         ; preds = %ok20.i
  %59 = extractvalue { i64, i1 } %57, 0
  br label %join33.i

slow23.i:                                         ; preds = %ok20.i
  %vals25.i = getelementptr inbounds i8, ptr %scratch34.i, i64 32
  store i64 3, ptr %scratch34.i, align 16
  %60 = getelementptr inbounds i8, ptr %scratch34.i, i64 8
  store i64 %53, ptr %60, align 8
  %61 = getelementptr inbounds i8, ptr %scratch34.i, i64 16
  store i64 3, ptr %61, align 16
  %62 = getelementptr inbounds i8, ptr %scratch34.i, i64 24
  store i64 %56, ptr %62, align 8
  %63 = getelementptr i8, ptr %vm, i64 264
  store i32 %6, ptr %63, align 4
  %64 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch34.i, ptr nonnull %vals25.i)
  br i1 %64, label %ok26.i, label %fail27.i, !prof !1

ok26.i:                                           ; preds = %slow23.i
  %tag28.i = load i64, ptr %vals25.i, align 16
  %65 = getelementptr inbounds i8, ptr %scratch34.i, i64 40
  %pay29.i = load i64, ptr %65, align 8
  %66 = icmp eq i64 %tag28.i, 3
  br i1 %66, label %join33.i, label %badtype31.i, !prof !1

fail27.i:                                         ; preds = %slow23.i
  call void @mist_rt_fail(ptr nonnull %0, i32 21)
  br label %m0.fib.twin.1.exit

badtype31.i:                                      ; preds = %ok26.i
  %vals32.i = getelementptr inbounds i8, ptr %scratch34.i, i64 48
  store i64 %tag28.i, ptr %vals32.i, align 16
  %67 = getelementptr inbounds i8, ptr %scratch34.i, i64 56
  store i64 %pay29.i, ptr %67, align 8
  %68 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals32.i, i32 22)
  call void @mist_rt_fail(ptr nonnull %0, i32 23)
  br label %m0.fib.twin.1.exit

join33.i:                                         ; preds = %ok26.i, %fast22.i
  %69 = phi i64 [ %59, %fast22.i ], [ %pay29.i, %ok26.i ]
  %70 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %69, 1
  br label %m0.fib.twin.1.exit

m0.fib.twin.1.exit:                               ; preds = %then.i, %stop.i, %fail6.i, %fail21.i, %fail27.i, %badtype31.i, %join33.i
  %common.ret.op.i = phi { i1, i64 } [ %47, %then.i ], [ zeroinitializer, %stop.i ], [ zeroinitializer, %fail6.i ], [ zeroinitializer, %fail21.i ], [ zeroinitializer, %fail27.i ], [ zeroinitializer, %badtype31.i ], [ %70, %join33.i ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch34.i)
  %ok19 = extractvalue { i1, i64 } %common.ret.op.i, 0
  br i1 %ok19, label %ok20, label %fail21, !prof !1

fail6:                                            ; preds = %m0.fib.twin.1.exit66
  call void @mist_rt_fail(ptr nonnull %0, i32 4)
  br label %common.ret

ok20:                                             ; preds = %m0.fib.twin.1.exit
  %71 = extractvalue { i1, i64 } %common.ret.op.i, 1
  %72 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %44, i64 %71)
  %73 = extractvalue { i64, i1 } %72, 1
  br i1 %73, label %slow23, label %fast22, !prof !2

fail21:                                           ; preds = %m0.fib.twin.1.exit
  call void @mist_rt_fail(ptr nonnull %0, i32 8)
  br label %common.ret

fast22:                                           ; preds = %ok20
  %74 = extractvalue { i64, i1 } %72, 0
  br label %join33

slow23:                                           ; preds = %ok20
  %vals25 = getelementptr inbounds i8, ptr %scratch34, i64 32
  store i64 3, ptr %scratch34, align 16
  %75 = getelementptr inbounds i8, ptr %scratch34, i64 8
  store i64 %44, ptr %75, align 8
  %76 = getelementptr inbounds i8, ptr %scratch34, i64 16
  store i64 3, ptr %76, align 16
  %77 = getelementptr inbounds i8, ptr %scratch34, i64 24
  store i64 %71, ptr %77, align 8
  %78 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %78, align 4
  %79 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch34, ptr nonnull %vals25)
  br i1 %79, label %ok26, label %fail27, !prof !1

ok26:                                             ; preds = %slow23
  %tag28 = load i64, ptr %vals25, align 16
  %80 = getelementptr inbounds i8, ptr %scratch34, i64 40
  %pay29 = load i64, ptr %80, align 8
  %81 = icmp eq i64 %tag28, 3
  br i1 %81, label %join33, label %badtype31, !prof !1

fail27:                                           ; preds = %slow23
  call void @mist_rt_fail(ptr nonnull %0, i32 9)
  br label %common.ret

badtype31:                                        ; preds = %ok26
  %vals32 = getelementptr inbounds i8, ptr %scratch34, i64 48
  store i64 %tag28, ptr %vals32, align 16
  %82 = getelementptr inbounds i8, ptr %scratch34, i64 56
  store i64 %pay29, ptr %82, align 8
  %83 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals32, i32 10)
  call void @mist_rt_fail(ptr nonnull %0, i32 11)
  br label %common.ret

join33:                                           ; preds = %ok26, %fast22
  %84 = phi i64 [ %74, %fast22 ], [ %pay29, %ok26 ]
  %85 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %84, 1
  br label %common.ret
}

declare i1 @mist_rt_prim(ptr, i32, i32, ptr, ptr) local_unnamed_addr

declare void @mist_rt_fail(ptr, i32) local_unnamed_addr

declare i1 @mist_rt_bad_value(ptr, ptr, i32) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn
declare ptr @llvm.stacksave.p0() #0

declare i1 @mist_rt_call_check(ptr) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare { i64, i1 } @llvm.sadd.with.overflow.i64(i64, i64) #1

define noundef i1 @m0.entry(ptr %0, ptr nocapture readonly %1, ptr nocapture readnone %2, ptr nocapture writeonly %3) local_unnamed_addr {
entry:
  %vm = load ptr, ptr %0, align 8, !invariant.load !0
  %4 = getelementptr i8, ptr %1, i64 8
  %pay = load i64, ptr %4, align 4
  %5 = getelementptr i8, ptr %vm, i64 264
  %depth = load i32, ptr %5, align 4
  %6 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %depth, i64 %pay)
  store i32 %depth, ptr %5, align 4
  %7 = extractvalue { i1, i64 } %6, 0
  br i1 %7, label %ok, label %common.ret

common.ret:                                       ; preds = %entry, %ok
  ret i1 %7

ok:                                               ; preds = %entry
  %8 = extractvalue { i1, i64 } %6, 1
  store i64 3, ptr %3, align 4
  %9 = getelementptr i8, ptr %3, i64 8
  store i64 %8, ptr %9, align 4
  br label %common.ret
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #2

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #2

attributes #0 = { mustprogress nocallback nofree nosync nounwind willreturn }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }

!0 = !{}
!1 = !{!"branch_weights", i32 2000, i32 1}
!2 = !{!"branch_weights", i32 1, i32 2000}
